"""`stretto redact DIR --out DIR2`: a pseudonymized copy of recorded sessions that teaches the same flow."""

from __future__ import annotations

from pathlib import Path
from typing import List

import typer

from stretto_core.cli.commands._load import load_for_verb
from stretto_core.cli.commands._values import output_folder
from stretto_core.errors import StrettoError
from stretto_core.sessions.redact import DEFAULT_K, KEY_ENV, key_from_env, pseudonyms_for, redact_session
from stretto_core.sessions.store import write_session


def redact(
    paths: List[Path] = typer.Argument(..., help="Session files, or folders searched for *.jsonl."),
    out: Path = typer.Option(..., "--out", help="The folder for the copy (made 0700, its files 0600)."),
    k: int = typer.Option(DEFAULT_K, "--k", help="A value held by fewer sessions than this is hashed."),
    field: List[str] = typer.Option([], "--field", help="Hash every value under this field name, however "
                                                        "many sessions share it (repeatable)."),
) -> None:
    """Hash every value fewer than K sessions hold, and every value under a named field, with a key
    from STRETTO_REDACT_KEY (never written): `stretto learn` learns the same flow from the copy."""
    if k < 1:
        raise StrettoError(f"--k must be at least 1, not {k}")
    output_folder(out, "--out")
    key = key_from_env()
    sessions = load_for_verb(paths)
    if out.resolve() in {p.resolve() for p in paths}:
        raise StrettoError(f"{out}: give --out a folder other than the sessions' own")
    names = pseudonyms_for(sessions, key, k, field)
    for session in sessions:
        write_session(redact_session(session, names), out)
    typer.echo(f"redacted {len(sessions)} sessions into {out}: {len(names.rare)} words hashed "
               f"(held by fewer than {k} sessions, or in such a value{', or under ' + ', '.join(field) if field else ''})")


def register(app: typer.Typer) -> None:
    app.command("redact", help=f"Pseudonymize sessions for sharing (a key in {KEY_ENV}); they teach the same flow.")(redact)
