// Prints Exception.ToString(), which the OpenTelemetry .NET SDK records in
// exception.stacktrace, for an exception with two inner exceptions. Lines
// marked "frame:" are the lines the parser test expects on the stack.
using System;
using System.Collections.Generic;

namespace Demo.Orders
{
    public class Repository<T>
    {
        private readonly Dictionary<string, T> items = new Dictionary<string, T>();

        public T Get(string key)
        {
            return items[key]; // frame:Get
        }
    }

    public static class Service
    {
        static int Parse(string text)
        {
            try
            {
                return int.Parse(text); // frame:Parse-call
            }
            catch (FormatException e)
            {
                throw new ArgumentException("bad quantity: " + text, nameof(text), e); // frame:Parse
            }
        }

        public static int Load(string key)
        {
            var repo = new Repository<string>();
            try
            {
                return repo.Get(key).Length; // frame:Load-call
            }
            catch (KeyNotFoundException)
            {
                Func<string, int> parse = s => Parse(s); // frame:lambda
                try
                {
                    return parse("x" + key); // frame:Load-parse
                }
                catch (ArgumentException e)
                {
                    throw new InvalidOperationException("order " + key + " cannot be loaded", e); // frame:Load
                }
            }
        }
    }

    public static class Program
    {
        public static void Main()
        {
            try
            {
                Service.Load("42"); // frame:Main
            }
            catch (Exception e)
            {
                Console.WriteLine(e.ToString());
            }
        }
    }
}
