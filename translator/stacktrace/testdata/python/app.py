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


def main():
    try:
        handle("{not json")  # frame:main
    except KeyError as exc:
        sys.stdout.write("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))


if __name__ == "__main__":
    main()
