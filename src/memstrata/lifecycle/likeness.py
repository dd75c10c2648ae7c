"""When two facts say the same thing (Checklist D: memory pollution).

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
verb that introduces one ("run", "use", "with", "via", "running", "launch"...),
and is written in lower case or in code ("Python 3.11 tests" names no command).
Its arguments are the words after it up to an English function word or verb ("to",
"in", "runs", "builds"...). Then one spelling per command (`canonical_command`):

* wrappers unwrapped: `python -m pytest`, `uv run pytest`, `poetry run X`, `npx X`,
  `bundle exec X` run pytest / X; `docker-compose` is `docker compose`; `./gradlew`
  and `./mvnw` are gradle and mvn;
* aliases resolved: `npm run test` = `npm t` = `npm test` (also pnpm, yarn, bun
  scripts), `cargo t` = `cargo test`; prose names too: "npm's test script";
* flags dropped (`pytest -q tests/unit` is `pytest tests/unit`; a flag's value
  stays: `tox -e py311` is not `tox -e lint`); after the subcommand only paths and
  values are kept, so trailing prose ("brings up all services") is not an argument.

The working folder is read from `cd DIR`, "in/from/inside the DIR folder|directory",
"in DIR/", "within ./DIR", "change into / go to DIR", "working directory: DIR", and
a bare "inside DIR" at the end of a phrase when DIR is not a word that follows "in"
in prose ("in parallel", "in CI"); "the repository root" is no folder at all.
Measured on held-out sets in `tests/lifecycle/test_likeness_groups.py`.
"""

from __future__ import annotations

import functools
import re


def _words(text: str) -> frozenset[str]:
    """A word list written as one string (one word per space)."""
    return frozenset(text.split())


_STOP = _words(
    "a an the is are was were be to of in on at for with and or by it this that as use uses "
    "used using run runs via from into"
)

EXECUTABLES = _words(
    "npm npx yarn pnpm bun bunx deno node python python3 pip pip3 uv poetry pipenv hatch pdm "
    "pytest py.test tox nox make cmake ninja cargo go rustc gradle ./gradlew gradlew mvn "
    "dotnet docker docker-compose kubectl helm terraform bundle rake rails mix ruby php "
    "composer just bash sh git ruff mypy black eslint tsc jest vitest ./mvnw mvnw"
)
# Also English words: a command only with one of its verbs after it ("go to evals", "just run").
_NEEDS_ARGS = {
    "go": frozenset(
        [
            "test",
            "build",
            "run",
            "vet",
            "mod",
            "get",
            "install",
            "fmt",
            "generate",
            "work",
            "tool",
            "list",
            "env",
            "clean",
            "doc",
            "version",
            "fix",
        ]
    ),
    "just": None,
}
# Words after which an executable is in command position.
_INTRODUCERS = _words(
    "&& || ; | : ( run use using with via execute type call invoke is then try and do command "
    "running executing invoking launch launching start by requires followed typing calling "
    "are was be runs &"
)
# Words that end a command's arguments: function words and the verbs that describe it.
_ARG_STOP = _words(
    "to for from in inside into within under on at and then or which that runs executes "
    "builds starts installs removes checks creates generates deletes cleans is are was will "
    "should can must the a an with via using if when before after locally first again here "
    "there it them this brings compiles produces stops launches serves tests does"
)
MAX_ARGS = 6
_ARG = re.compile(r"^(?:-{1,2}[\w-]+(?:=\S+)?|[a-z0-9@~.][\w:.=/@+~-]*)$")
_TOKEN = re.compile(r"&&|\|\||[;|:()`]|[^\s;|:()`]+")
_CD = re.compile(r"(?:^|[\s(`;&])cd\s+(?:into\s+|to\s+)?(?:the\s+)?([\w.~/-]+)")
_DIR_NOUN = re.compile(
    r"\b(?:in|inside|from|under|within|into|to)\s+(?:the\s+)?[`'\"]?([\w.~/-]+?)/?[`'\"]?\s+"
    r"(?:directory|dir|folder|subfolder|subdirectory|package|workspace)\b"
)
_DIR_SLASH = re.compile(
    r"\b(?:in|inside|from|under|within|into|to)\s+(?:the\s+)?[`'\"]?((?:\./)?[\w.~-]+/|\./[\w.~-]+)"
    r"(?=[\s`'\",.;)]|$)"
)
_DIR_VERB = re.compile(
    r"\b(?:change|go|switch|move|navigate|step|descend|head|chdir)\s+(?:in)?(?:to|into)\s+"
    r"(?:the\s+)?[`'\"]?([\w.~/-]+?)/?[`'\"]?(?:\s+(?:directory|dir|folder)\b|(?=\s*(?:$|[,;.)]|"
    r"\s(?:and|then|first)\b)))"
)
_DIR_CWD = re.compile(
    r"\b(?:working\s+(?:directory|dir|folder)|cwd|workdir)\s*[:=]?\s*(?:is\s+)?"
    r"[`'\"]?([\w.~/-]+)"
)
# A bare "in evals" names a folder only at the end of a phrase and when it is not one
# of the words that follow "in" in prose about commands ("in parallel", "in CI").
_DIR_BARE = re.compile(
    r"\b(?:in|inside|within|from|under|lives in|located in)\s+(?:the\s+)?([\w.~-]+)"
    r"(?=\s*(?:$|[,;.)]|\s(?:and|then|with|using|via|by)\b))"
)
_NOT_FOLDERS = _words(
    "parallel ci production prod staging dev development background foreground watch order "
    "general practice isolation docker sequence series place time future memory short detail "
    "full turn advance case addition particular that this it them there here which one use "
    "mind effect fact all every each any container containers terminal shell repo ide editor "
    "browser seconds minutes mode debug release"
)
_ROOT = frozenset([".", "root", "repo-root", "repository", "project", "top-level", "toplevel", "~"])
_ROOT_PHRASE = re.compile(
    r"\b(?:repo(?:sitory)?|project|top[- ]level|workspace)\s+root\b|"
    r"\btop[- ]level\b"
)
# Prose names of a tool's script/target/task: "npm's test script", "the build target of make".
_OWN_SCRIPT = re.compile(
    r"\b([\w.-]+)'s\s+([\w:.-]+)\s+(?:script|target|task|command|recipe)\b", re.I
)
_SCRIPT_OF = re.compile(
    r"\bthe\s+([\w:.-]+)\s+(?:script|target|task|recipe)\s+"
    r"(?:with|via|using|of|from|in)\s+([\w.-]+)\b",
    re.I,
)
# Wrappers that run another command ("uv run pytest" runs pytest), and aliases.
_WRAPPERS = {
    ("python", "-m"),
    ("uv", "run"),
    ("poetry", "run"),
    ("pipenv", "run"),
    ("hatch", "run"),
    ("pdm", "run"),
    ("rye", "run"),
    ("pnpm", "exec"),
    ("yarn", "dlx"),
    ("bundle", "exec"),
    ("pnpm", "dlx"),
}
_RUNNERS = frozenset(["npx", "bunx"])
_EXE_NAMES = {
    "python3": "python",
    "py": "python",
    "py.test": "pytest",
    "mvnw": "mvn",
    "gradlew": "gradle",
}
_SCRIPT_RUNNERS = frozenset(["npm", "pnpm", "yarn", "bun"])
_ALIASES = {
    "npm": {
        "t": "test",
        "tst": "test",
        "i": "install",
        "isntall": "install",
        "add": "install",
        "run-script": "run",
        "rum": "run",
        "urn": "run",
    },
    "pnpm": {"t": "test", "i": "install", "run-script": "run"},
    "yarn": {"run-script": "run"},
    "bun": {"t": "test", "i": "install"},
    "cargo": {"t": "test", "b": "build", "r": "run", "c": "check", "d": "doc"},
    "go": {},
}
_SUBCOMMAND_SLOTS = {"docker": 2, "kubectl": 2, "helm": 2, "git": 2, "dotnet": 2}

Signature = frozenset[tuple[str | None, tuple[str, ...]]]


def tokens(text: str) -> frozenset[str]:
    """Content words, lower-cased, stop words out, plural 's' folded."""
    out = set()
    for w in re.findall(r"[a-z0-9]+", text.lower()):
        if w in _STOP:
            continue
        out.add(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)
    return frozenset(out)


def _folder(raw: str) -> str | None:
    d = raw.strip("`'\"").rstrip(".,;").removeprefix("./").rstrip("/")
    return None if not d or d in _ROOT else d


def working_folder(text: str) -> str | None:
    """The folder a fact's commands run in: `cd DIR`, "in the DIR folder", "from DIR/",
    "go to DIR", "working directory: DIR", "(inside DIR)"; None for the repository root."""
    low = text.lower()
    if _ROOT_PHRASE.search(low) and not _CD.search(low):
        return None
    for pattern in (_CD, _DIR_CWD, _DIR_NOUN, _DIR_SLASH, _DIR_VERB):
        m = pattern.search(low)
        if m:
            return _folder(m.group(1))
    for m in _DIR_BARE.finditer(low):
        word = m.group(1).strip(".")
        if word not in _NOT_FOLDERS and word not in EXECUTABLES and word not in _STOP:
            return _folder(word)
    return None


def _prose_to_command(text: str) -> str:
    """ "npm's test script" -> "npm run test"; "the build target of make" -> "make build"."""

    def own(m: re.Match[str]) -> str:
        tool, name = m.group(1).lower(), m.group(2)
        if tool not in EXECUTABLES:
            return m.group(0)
        return f"run {tool} run {name}" if tool in _SCRIPT_RUNNERS else f"run {tool} {name}"

    def of(m: re.Match[str]) -> str:
        name, tool = m.group(1), m.group(2).lower()
        if tool not in EXECUTABLES:
            return m.group(0)
        return f"run {tool} run {name}" if tool in _SCRIPT_RUNNERS else f"run {tool} {name}"

    return _SCRIPT_OF.sub(of, _OWN_SCRIPT.sub(own, text))


def canonical_command(words: tuple[str, ...]) -> tuple[str, ...]:
    """One spelling per command: wrappers unwrapped, aliases resolved, flags dropped.

    Example:
        >>> canonical_command(("python3", "-m", "pytest", "-q", "tests/unit"))
        ('pytest', 'tests/unit')
        >>> canonical_command(("npm", "run", "test")) == canonical_command(("npm", "t"))
        True
    """
    w = list(words)
    while w:
        w[0] = _EXE_NAMES.get(w[0].removeprefix("./"), w[0].removeprefix("./"))
        if w[0] == "docker-compose":
            w[:1] = ["docker", "compose"]
        if len(w) >= 3 and (w[0], w[1]) in _WRAPPERS:  # `uv run pytest` runs pytest
            w = w[2:]
        elif len(w) >= 2 and w[0] in _RUNNERS:  # `npx vitest` runs vitest
            w = w[1:]
        else:
            break
    if not w:
        return ()
    exe, args = w[0], [a for a in w[1:] if not a.startswith("-")]  # flags do not change it
    if args:
        args[0] = _ALIASES.get(exe, {}).get(args[0], args[0])
    if exe in _SCRIPT_RUNNERS and len(args) >= 2 and args[0] == "run":
        args = args[1:]  # `npm run test` is `npm test`: a script by name
    slots = _SUBCOMMAND_SLOTS.get(exe, 1)
    kept: list[str] = []
    for i, a in enumerate(args):  # subcommand words first, then only paths and values
        if i < slots or re.search(r"[/._~:@=0-9]", a):
            kept.append(a)
    return (exe, *kept)


@functools.lru_cache(maxsize=4096)
def command_signature(text: str) -> Signature:
    """The commands a fact names, each with its working folder (empty: it names none).

    Example:
        >>> sorted(command_signature("Tests run via `npm test` inside the evals directory"))
        [('evals', ('npm', 'test'))]
        >>> command_signature("Use npm run test in the evals folder") == command_signature(
        ...     "change into the evals directory and run npm's test script")
        True
    """
    spelled = _TOKEN.findall(_prose_to_command(text))
    words = [t.lower() for t in spelled]
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
        # "Python 3.11 tests", "Make sure ...": a capitalised tool name is a proper noun
        # in prose; commands are written in lower case (or in a code span).
        if (
            w in EXECUTABLES
            and (prev is None or prev in _INTRODUCERS)
            and (in_code or not spelled[i][:1].isupper())
        ):
            args: list[str] = []
            j = i + 1
            while j < len(words) and len(args) < MAX_ARGS:
                a = words[j]
                ended = a.endswith((".", ",")) and not a.endswith("...")
                a = a.rstrip(",") if a.endswith("...") else a.rstrip(".,")
                if a in _ARG_STOP or not _ARG.match(a):
                    break
                args.append(a)
                j += 1
                if ended:
                    break
            verbs = _NEEDS_ARGS.get(w, ())
            if verbs != () and (not args or (verbs is not None and args[0] not in verbs)):
                prev = w  # "go to evals", "just run it": the English word
                i += 1
                continue
            command = canonical_command((w, *args))
            if command:
                found.add((folder, command))
            prev = w
            i = j
            continue
        if w == "cd" and i + 1 < len(words):  # `cd DIR` is the folder, not a command
            i += 3 if i + 2 < len(words) and words[i + 1] in ("into", "to") else 2
            prev = "cd"
            continue
        prev = w
        i += 1
    # "the recipe is run with just: just lint": the bare tool name is a mention of it
    with_args = {(f, c[0]) for f, c in found if len(c) > 1}
    return frozenset((f, c) for f, c in found if len(c) > 1 or (f, c[0]) not in with_args)


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
