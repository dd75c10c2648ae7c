"""When two facts say the same thing (seed 001 Checklist D: memory pollution).

Durable facts are mostly of two shapes, and each is compared by what carries
its meaning:

* **A command** ("The test command is `cd evals && npm test`", "Tests run via
  `npm test` inside the evals directory"). What matters is the command and the
  folder it runs in, not the words around it: `command_signature` reads every
  command (an executable in command position, with its arguments) and the
  working folder (`cd DIR`, "in the DIR folder", "from DIR/"). Two facts that
  both name commands are duplicates exactly when they name the same commands in
  the same folder, however differently they are phrased; `cd api && npm test` is
  not `cd evals && npm test`, however many words the two sentences share.
* **A statement** ("The API uses Fastify"): content words after stop words and
  plural folding, compared by Jaccard and by the overlap coefficient (so a
  sentence with a few extra words still matches its shorter twin).

A command is recognised by position, not by a list of known phrasings: an
executable (from a list of common developer tools) counts when it opens a code
span, follows a command separator (`&&`, `;`, `|`, `:`, an opening parenthesis) or a
verb that introduces one ("run", "use", "with", "via", "is"...). Its arguments
are the words after it up to an English function word or verb ("to", "in",
"runs", "builds"...), at most three.
"""

from __future__ import annotations

import functools
import re

_STOP = frozenset(
    ["a", "an", "the", "is", "are", "was", "were", "be", "to", "of", "in", "on", "at", "for",
     "with", "and", "or", "by", "it", "this", "that", "as", "use", "uses", "used", "using",
     "run", "runs", "via", "from", "into"])

EXECUTABLES = frozenset(
    ["npm", "npx", "yarn", "pnpm", "bun", "deno", "node", "python", "python3", "pip", "pip3",
     "uv", "poetry", "pytest", "tox", "nox", "make", "cmake", "ninja", "cargo", "go", "rustc",
     "gradle", "./gradlew", "gradlew", "mvn", "dotnet", "docker", "docker-compose", "kubectl",
     "helm", "terraform", "bundle", "rake", "rails", "mix", "ruby", "php", "composer", "just",
     "bash", "sh", "git", "ruff", "mypy", "black", "eslint", "tsc", "jest", "vitest"])
# Words after which an executable is in command position.
_INTRODUCERS = frozenset(
    ["&&", "||", ";", "|", ":", "(", "run", "use", "using", "with", "via", "execute", "type",
     "call", "invoke", "is", "then", "try", "and", "do", "command"])
# Words that end a command's arguments: function words and the verbs that describe it.
_ARG_STOP = frozenset(
    ["to", "for", "from", "in", "inside", "into", "within", "under", "on", "at", "and", "then",
     "or", "which", "that", "runs", "executes", "builds", "starts", "installs", "removes",
     "checks", "creates", "generates", "deletes", "cleans", "is", "are", "was", "will",
     "should", "can", "must", "the", "a", "an", "with", "via", "using", "if", "when",
     "before", "after", "locally", "first", "again", "here", "there", "it", "them", "this"])
_ARG = re.compile(r"^(?:-{1,2}[\w-]+(?:=\S+)?|[a-z0-9@~.][\w:.=/@+~-]*)$")
_TOKEN = re.compile(r"&&|\|\||[;|:()`]|[^\s;|:()`]+")
_CD = re.compile(r"(?:^|[\s(`;&])cd\s+(?:into\s+|to\s+)?(?:the\s+)?([\w.~/-]+)")
_DIR_NOUN = re.compile(
    r"\b(?:in|inside|from|under|within)\s+(?:the\s+)?[`'\"]?([\w.~/-]+?)/?[`'\"]?\s+"
    r"(?:directory|dir|folder|subfolder|subdirectory|package)\b")
_DIR_SLASH = re.compile(r"\b(?:in|inside|from|under|within)\s+(?:the\s+)?[`'\"]?([\w.~-]+)/(?=[\s`'\",.;)]|$)")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(])")

Signature = frozenset[tuple[str | None, tuple[str, ...]]]


def tokens(text: str) -> frozenset[str]:
    """Content words, lower-cased, stop words out, plural 's' folded."""
    out = set()
    for w in re.findall(r"[a-z0-9]+", text.lower()):
        if w in _STOP:
            continue
        out.add(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return frozenset(out)


def _folder(raw: str) -> str:
    d = raw.strip("`'\".,;").removeprefix("./").rstrip("/")
    return d or "."


def working_folder(text: str) -> str | None:
    """The folder a fact's commands run in: `cd DIR`, "in the DIR folder", "from DIR/"."""
    low = text.lower()
    for pattern in (_CD, _DIR_NOUN, _DIR_SLASH):
        m = pattern.search(low)
        if m:
            return _folder(m.group(1))
    return None


@functools.lru_cache(maxsize=4096)
def command_signature(text: str) -> Signature:
    """The commands a fact names, each with its working folder (empty: it names none).

    Example:
        >>> sorted(command_signature("Tests run via `npm test` inside the evals directory"))
        [('evals', ('npm', 'test'))]
    """
    low = text.lower()
    words = _TOKEN.findall(low)
    folder = working_folder(text)
    in_code = False
    found: set[tuple[str | None, tuple[str, ...]]] = set()
    prev = None
    i = 0
    while i < len(words):
        w = words[i].rstrip(".,")
        if w == "`":
            in_code = not in_code
            prev = "("
            i += 1
            continue
        if w in EXECUTABLES and (prev is None or prev in _INTRODUCERS):
            args: list[str] = []
            j = i + 1
            while j < len(words) and len(args) < 3:
                a = words[j]
                ended = a.endswith((".", ","))
                a = a.rstrip(".,")
                if a in _ARG_STOP or not _ARG.match(a):
                    break
                args.append(a)
                j += 1
                if ended:
                    break
            found.add((folder, (w, *args)))
            prev = w
            i = j
            continue
        if w == "cd" and i + 1 < len(words):  # `cd DIR` is the folder, not a command
            i += 3 if i + 2 < len(words) and words[i + 1] in ("into", "to") else 2
            prev = "cd"
            continue
        prev = w
        i += 1
    return frozenset(found)


def _code(text: str) -> frozenset[str]:
    return frozenset(" ".join(c.split()) for c in re.findall(r"`([^`]{6,})`", text))


def similarity(a: str, b: str) -> float:
    """How alike two facts are, 0..1 (see the module docstring).

    Both name commands: 1.0 if they name the same commands in the same folder, else
    0.0. Otherwise: max(token Jaccard, overlap coefficient when the smaller side has
    >= 3 content words), or 1.0 when both quote the same code span.
    """
    sa, sb = command_signature(a), command_signature(b)
    if sa and sb:
        return 1.0 if sa == sb else 0.0
    if _code(a) & _code(b):
        return 1.0
    ta, tb = tokens(a), tokens(b)
    if not ta or not tb:
        return 1.0 if a.strip().lower() == b.strip().lower() else 0.0
    inter = len(ta & tb)
    jaccard = inter / len(ta | tb)
    small = min(len(ta), len(tb))
    overlap = inter / small if small >= 3 else 0.0
    return max(jaccard, overlap)


def near_duplicate(a: str, b: str, threshold: float = 0.8) -> bool:
    return similarity(a, b) >= threshold


def sentences(text: str) -> int:
    return len([s for s in _SENTENCE.split(text.strip()) if s.strip()])
