"""Entry point: `memstrata [--home DIR] [--agent NAME] [--room ROOM] [--json] COMMAND ...`.

Command groups live in their own modules and register themselves through
`cli.parser.COMMAND_MODULES`; each exposes `register(subparsers)` and sets `func` on its
parsers. Every command's `--help` ends with an example (`cli.examples`).

Errors: the library's typed errors become one line on stderr, or with `--json`
one JSON object on stderr (`{"error": {"code", "message", "exit"}}`), and an
exit code chosen in one place, `exit_code`, from the error tree:

    0  success
    1  any other error
    2  usage: bad arguments or values (InvalidInput), or a request the caller's role
       or a policy refuses (ScopeDenied, Refused)
    3  not found (NotFound: unknown id, key, file, session)
    4  conflict (Conflict: not unique, already exists, changed since it was read)
    130 interrupted (Ctrl-C)

An operating-system error (a home that cannot be created, a disk error) is code
"os_error", exit 1; anything else unexpected is code "internal", exit 1, with a hint
to rerun with MEMSTRATA_DEBUG=1, which shows the traceback. Under --json every line
on stderr is one JSON object: the error, and warnings and notices as
`{"warning": {"message": ...}}` (`cli.common.say`).

No tracebacks for user mistakes.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from memstrata.cli.common import (
    EXIT_CONFLICT,
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_NOT_FOUND,
    EXIT_OK,
    EXIT_USAGE,
    report,
)
from memstrata.cli.common import emit as emit  # what every command prints through
from memstrata.cli.common import shown as shown
from memstrata.cli.quick import context_args  # `context` without argparse (start-up)

_ARGV: Sequence[str] | None = None  # the argv `main` was given (None: sys.argv's)


def exit_code(exc: BaseException) -> int:
    """The exit code of an error, from the error tree (the one place it is decided)."""
    from memstrata.errors import Conflict, InvalidInput, NotFound, Refused, ScopeDenied

    for kind, code in (
        (InvalidInput, EXIT_USAGE),
        (NotFound, EXIT_NOT_FOUND),
        (Conflict, EXIT_CONFLICT),
        (ScopeDenied, EXIT_USAGE),
        (Refused, EXIT_USAGE),
    ):
        if isinstance(exc, kind):
            return code
    return EXIT_ERROR


def _os_error_text(exc: OSError) -> str:
    where = " ".join(repr(str(f)) for f in (exc.filename, exc.filename2) if f is not None)
    return f"{exc.strerror or exc}" + (f": {where}" if where else "")


def _json_log_handler() -> Any:
    """A logging handler writing each record as one JSON line on stderr (under --json, so
    a background job's warning does not break a reader parsing stderr)."""
    import logging

    class JsonLines(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            level = "warning" if record.levelno >= logging.WARNING else "notice"
            message = record.getMessage().removeprefix("memstrata: ")
            sys.stderr.write(json.dumps({level: {"message": message}}, ensure_ascii=False) + "\n")

    return JsonLines(logging.WARNING)


def main(argv: Sequence[str] | None = None) -> int:
    from memstrata.cli.common import json_stderr
    from memstrata.errors import MemstrataError

    global _ARGV
    _ARGV = argv
    args: Any = context_args(sys.argv[1:] if argv is None else argv)
    if args is None:  # any command but a plain `context`: argparse reads it
        from memstrata.cli import parser as cli_parser

        cli_parser._ARGV = argv
        parser = cli_parser.build_parser(cli_parser.command_asked(argv))
        args = parser.parse_args(argv)
        if not getattr(args, "func", None):
            parser.print_help()
            return EXIT_USAGE
    json_stderr(args.json)
    handler = None
    if args.json:
        import logging

        handler = _json_log_handler()
        logger = logging.getLogger("memstrata")
        logger.addHandler(handler)
        logger.propagate = False
    from memstrata.files.versions import surface

    # What the versions of this command's writes say (servers name their own surfaces);
    # scoped to the command, so a caller of `main` in-process keeps its own.
    named = args.command not in ("mcp", "serve")
    try:
        with surface(f"cli {args.command}") if named else contextlib.nullcontext():
            rc = args.func(args)
        return int(rc or 0)
    except MemstrataError as exc:
        status = exit_code(exc)
        report(exc.code, str(exc), status, as_json=args.json)
        return status
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
    except OSError as exc:  # the operating system said no: not our bug, no traceback
        if os.environ.get("MEMSTRATA_DEBUG"):
            raise
        report("os_error", _os_error_text(exc), EXIT_ERROR, as_json=args.json)
        return EXIT_ERROR
    except Exception as exc:  # a bug: one line (or JSON), the traceback on request
        if os.environ.get("MEMSTRATA_DEBUG"):
            raise
        message = f"{type(exc).__name__}: {exc}"
        if not args.json:
            message += " (an internal error; rerun with MEMSTRATA_DEBUG=1 for the traceback)"
        report("internal", message, EXIT_ERROR, as_json=args.json)
        return EXIT_ERROR
    finally:
        json_stderr(False)
        if handler is not None:
            import logging

            logger = logging.getLogger("memstrata")
            logger.removeHandler(handler)
            logger.propagate = True


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
