"""From parsed flags to the library's parameters, and back for errors: a flag's ``dest`` is
the parameter it sets, so a target's parameters are the flags its signature names."""

from __future__ import annotations

import argparse
import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["RUNTIME_OPTIONS", "as_flags", "params_for", "stored_params", "takes"]

#: Flags that say where and how a job runs, or what it shows: never stored with a run.
RUNTIME_OPTIONS = frozenset({
    "command", "verbose", "scheduler", "workers", "jobqueue", "jobs", "jobqueue_config",
    "jobqueue_wait", "data_dir", "store", "overwrite", "resume", "break_lock", "no_progress",
    "tls_ca_file", "tls_cert", "tls_key", "walltime", "adapt", "job_script_prologue",
    "job_directives_skip"})


def takes(target: Callable[..., Any], params: Mapping[str, Any],
          skip: Iterable[str] = ()) -> dict[str, Any]:
    """The entries of ``params`` that ``target`` (a class or a function) has a parameter
    for, but those in ``skip``."""
    names = inspect.signature(target).parameters
    skipped = set(skip)
    return {k: v for k, v in params.items() if k in names and k not in skipped}


def params_for(args: argparse.Namespace, target: Callable[..., Any],
               skip: Iterable[str] = ()) -> dict[str, Any]:
    """``target``'s parameters from the parsed flags (:func:`takes` of ``vars(args)``)."""
    return takes(target, vars(args), skip)


def stored_params(args: argparse.Namespace) -> dict[str, Any]:
    """The flags that decide a job's result, stored with its run and compared on resume (not
    where it runs: an interrupted run may resume on another cluster)."""
    return {k: v for k, v in sorted(vars(args).items()) if k not in RUNTIME_OPTIONS}


def _flags(parser: argparse.ArgumentParser) -> dict[str, tuple[str, bool]]:
    """dest → (the long flag, whether it takes a value)."""
    return {a.dest: (max(a.option_strings, key=len), a.nargs != 0) for a in parser._actions
            if a.option_strings and a.dest != "help"}


#: Library calls that errors suggest, and the flag that does the same.
_CALLS = {"daskfair.store.break_lock(path)": "break_lock", "daskfair.store.break_lock":
          "break_lock"}
# a name, not part of a path, a dotted name, a quoted value or a call
_NAMED = re.compile(r"(?<![\w./'\"-])([a-z][a-z0-9_]*)"
                    r"(=(?:'[^']*'|\"[^\"]*\"|\.\.\.|[^\s,;)]*[^\s,;).])?)?"
                    r"(?![\w(/'\"-]|\.\w)")


def as_flags(message: str, parser: argparse.ArgumentParser) -> str:
    """``message`` with the parameters that are flags of ``parser`` written as flags.

    ``min_group_size=5`` becomes ``--min-group-size 5``, ``small_groups='merge'``
    ``--small-groups merge`` and ``overwrite=True`` ``--overwrite``; a bare name is rewritten
    only when it holds an underscore (a word such as ``kernel`` may be plain English) or
    opens a parameter check's message (``cv must be ...``).
    """
    flags = _flags(parser)
    first = re.match(r"([a-z][a-z0-9_]*) must be ", message)
    if first and first.group(1) in flags:
        message = flags[first.group(1)][0] + message[first.end(1):]
    for call, dest in _CALLS.items():
        if dest in flags:
            message = message.replace(call, flags[dest][0])

    def flag(m: re.Match[str]) -> str:
        name, value = m.group(1), m.group(2)
        if name not in flags or (value is None and "_" not in name):
            return m.group(0)
        text, takes_value = flags[name]
        value = (value or "=")[1:].strip("'\"")
        if not takes_value or value in ("", "..."):
            return text + (" ..." if value == "..." and takes_value else "")
        return f"{text} {value}"

    return _NAMED.sub(flag, message)
