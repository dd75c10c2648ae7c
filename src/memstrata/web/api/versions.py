"""File versions: every replace of NOW, CONTEXT, identity and memory files keeps what it
replaced (`layers.versions`); these routes list, show, diff and restore them.

A file is named by `path` as the memory tools name it ("CONTEXT.md", "notes/a.md"),
by the `path` a history returns ("memory/CONTEXT.md", "AGENT.md"), or by its layer
("now", "context", "identity"). Versions are named by `id` (the first 12 hex digits of
their sha256, or any prefix of 4+), or "current". Times are ISO 8601 (UTC). A restore
carries the sha256 of the content the client saw (`expected_sha`, which is also the
current version's `sha256`): if the file changed meanwhile it answers 409
`stale_write` and writes nothing. Reading needs read access to the file's layer and
restoring write access, checked by the library's one gate.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field

from memstrata.files.versions import ID_CHARS, sha256, surface
from memstrata.web.context import store_of

router = APIRouter(prefix="/agents", tags=["versions"])
FilePath = Annotated[str, Query(min_length=1, max_length=1024, description="the file")]
VersionId = Annotated[str, Field(min_length=4, max_length=64, pattern="^([0-9a-fA-F]+|current)$")]


class Restore(BaseModel):
    path: str = Field(min_length=1, max_length=1024, description="the file")
    version: VersionId
    expected_sha: str | None = Field(
        None,
        max_length=64,
        pattern="^[0-9a-f]{64}$",
        description="sha256 of the content you saw (409 stale_write if it changed)",
    )


@router.get("/{agent}/history", summary="A file's versions, newest first (no path: the files)")
def history(
    request: Request,
    agent: str,
    path: Annotated[str | None, Query(max_length=1024)] = None,
    limit: Annotated[int | None, Query(ge=1, le=1000)] = None,
) -> dict[str, Any]:
    versions = store_of(request).agent(agent).versions
    if path is None:
        return {"agent": agent, "files": versions.files()}
    return versions.history(path, limit=limit).to_dict()


@router.get("/{agent}/versions/{version}", summary="One version's content")
def version(
    request: Request,
    agent: str,
    version: Annotated[str, VersionId],
    path: FilePath,
) -> dict[str, Any]:
    text = store_of(request).agent(agent).versions.read(path, version)
    sha = sha256(text.encode("utf-8"))
    return {"agent": agent, "path": path, "id": sha[:ID_CHARS], "sha256": sha, "text": text}


@router.get("/{agent}/diff", summary="A unified diff between two versions")
def diff(
    request: Request,
    agent: str,
    path: FilePath,
    a: Annotated[str, Query(min_length=4, max_length=64, description="from this version")],
    b: Annotated[str, Query(min_length=4, max_length=64, description="to this one")] = "current",
) -> dict[str, Any]:
    text = store_of(request).agent(agent).versions.diff(path, a, b)
    return {"agent": agent, "path": path, "a": a, "b": b, "diff": text}


@router.post("/{agent}/restore", summary="Make a version current again (itself a new version)")
def restore(request: Request, agent: str, body: Restore) -> dict[str, Any]:
    versions = store_of(request).agent(agent).versions  # (names the surface "api")
    with surface("restore"):
        done = versions.restore(body.path, body.version, expected_sha=body.expected_sha)
    return done.to_dict()
