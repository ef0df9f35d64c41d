"""Prints chained tracebacks the way the OpenTelemetry Python SDK records them
in exception.stacktrace (traceback.format_exception of the caught exception).
Lines marked "frame:" are the lines the parser test expects on the stack."""
import json
import sys
import traceback


class AppError(Exception):
    pass


def parse(doc):
    return json.loads(doc)  # frame:parse


def load(doc):
    try:
        return parse(doc)  # frame:load-call
    except ValueError as exc:
        raise AppError("cannot load config") from exc  # frame:load


def handle(doc):
    try:
        load(doc)  # frame:handle-call
    except AppError:
        {}["missing"]  # frame:handle


def countdown(n):
    if n == 0:
        err = ValueError("reached zero\nafter counting down")
        err.add_note("note: counted from 30")
        raise err  # frame:countdown-raise
    return countdown(n - 1)  # frame:countdown


def record(exc):
    sys.stdout.write("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))


def main():
    try:
        handle("{not json")  # frame:main
    except KeyError as exc:
        record(exc)
    sys.stdout.write("=====recursion=====\n")
    try:
        (lambda: countdown(30))()  # frame:main-lambda
    except ValueError as exc:
        record(exc)


if __name__ == "__main__":
    main()
