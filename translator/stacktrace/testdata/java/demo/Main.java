package demo;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.Method;

// Prints Throwable.printStackTrace output the way the OpenTelemetry Java SDK
// records it in exception.stacktrace. Lines marked "frame:" are the lines the
// parser test expects on the stack.
public class Main {
    static class Resource implements AutoCloseable {
        @Override
        public void close() {
            throw new IllegalArgumentException("close failed"); // frame:close
        }
    }

    static void inner(int depth) {
        throw new IllegalStateException("inner failed at depth " + depth); // frame:inner
    }

    static void middle() {
        try {
            inner(3); // frame:middle-call
        } catch (IllegalStateException e) {
            throw new RuntimeException("middle wrapped", e); // frame:middle
        }
    }

    public static void reflected() {
        try (Resource r = new Resource()) {
            middle(); // frame:reflected
        }
    }

    static void outer() throws Exception {
        Method m = Main.class.getMethod("reflected");
        Runnable run = () -> {
            try {
                m.invoke(null); // frame:lambda
            } catch (Exception e) {
                throw new UnsupportedOperationException("outer failed\nsecond line", e); // frame:lambda-throw
            }
        };
        run.run(); // frame:outer
    }

    public static void main(String[] args) throws Exception {
        try {
            outer(); // frame:main
        } catch (Exception e) {
            StringWriter sw = new StringWriter();
            e.printStackTrace(new PrintWriter(sw));
            System.out.print(sw);
        }
    }
}
