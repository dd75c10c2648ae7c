"""What a shell line that succeeded shows about the commands in it.

A coding agent runs one line for several steps: `go mod edit -go=1.23 && go get
golang.org/x/crypto@v0.27.0` (support-marlin), after `go get ...` alone failed. The line's
exit status is its last and-or list's: each pipeline of an `&&` list ran and succeeded,
and a pipeline's status is its last command's. What came before a `;`, a newline or a
background `&`, a pipeline's earlier commands, and an `||` list (`a && b || true`
succeeds whichever failed) say nothing. Quotes are respected; a line with a subshell or a
substitution is not read at all. Pure functions.
"""

from __future__ import annotations


def succeeded_parts(command: str) -> list[list[str]]:
    """The commands a shell line that exited 0 shows succeeded, as words: the last command
    of each pipeline of its last `&&` list (the one after its last `;`, `&` or newline),
    none when that list holds an `||` (`a && b || true` succeeds whichever failed).
    Nothing is read into a line with a subshell or a substitution (`(`, a backquote).

    >>> succeeded_parts("go mod edit -go=1.23 && go get golang.org/x/crypto@v0.27.0")
    [['go', 'mod', 'edit', '-go=1.23'], ['go', 'get', 'golang.org/x/crypto@v0.27.0']]
    >>> succeeded_parts("make docs; cd site && hugo 2>&1 | tail -3")
    [['cd', 'site'], ['tail', '-3']]
    """
    lists: list[list[tuple[str, str]]] = [[]]  # and-or lists of (command, operator after it)
    start, quote, i = 0, "", 0
    while i < len(command):
        c, two = command[i], command[i : i + 2]
        if quote:
            quote = "" if c == quote else quote
            i += 2 if c == "\\" and quote == '"' else 1
            continue
        if c in "()`":
            return []
        op = ""
        if c == "\\":
            i += 2
            continue
        if c in "'\"":
            quote = c
        elif two in ("&&", "||"):
            op = two
        elif c in ";\n" or (c == "&" and command[i - 1 : i] not in "<>" and two != "&>"):
            op = ";"
        elif c == "|" and command[i - 1 : i] != ">":
            op = "|"
        if op:
            lists[-1].append((command[start:i], op))
            if op == ";":
                lists.append([])
            i += len(op) if op != ";" else 1
            start = i
            continue
        i += 1
    lists[-1].append((command[start:], ""))
    last = next((x for x in reversed(lists) if any(p.strip() for p, _ in x)), [])
    if any(op == "||" for _, op in last):
        return []
    return [p.split() for p, op in last if op != "|" and p.strip()]
