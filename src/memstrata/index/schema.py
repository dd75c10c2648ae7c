"""Named migrations, applied in order on open; `meta.schema` records the last one applied.

Every text-bearing memory of every layer is one row of `docs`, mirrored into the
FTS5 table `docs_fts` by triggers. `sources` records how far each source file has
been indexed so that opening a store only reads what changed.
"""

from __future__ import annotations

MIGRATIONS: list[tuple[str, str]] = [
    (
        "001_docs",
        """
        CREATE TABLE IF NOT EXISTS docs (
            id INTEGER PRIMARY KEY,
            uid TEXT NOT NULL UNIQUE,
            layer TEXT NOT NULL,
            owner TEXT,
            room TEXT,
            kind TEXT,
            tags TEXT NOT NULL DEFAULT '',
            ts REAL NOT NULL,
            title TEXT NOT NULL DEFAULT '',
            body TEXT NOT NULL DEFAULT '',
            context TEXT NOT NULL DEFAULT '',
            source TEXT NOT NULL,
            line INTEGER,
            thread TEXT,
            pos INTEGER,
            supersedes TEXT,
            superseded INTEGER NOT NULL DEFAULT 0,
            meta TEXT
        );
        CREATE INDEX IF NOT EXISTS docs_source ON docs(source);
        CREATE INDEX IF NOT EXISTS docs_layer_ts ON docs(layer, ts);
        CREATE INDEX IF NOT EXISTS docs_owner ON docs(owner, layer);
        CREATE INDEX IF NOT EXISTS docs_thread ON docs(thread, pos);
        CREATE INDEX IF NOT EXISTS docs_supersedes ON docs(supersedes);
        CREATE VIRTUAL TABLE IF NOT EXISTS docs_fts USING fts5(
            title, body, tags, context,
            content='docs', content_rowid='id',
            tokenize='porter unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER IF NOT EXISTS docs_ai AFTER INSERT ON docs BEGIN
            INSERT INTO docs_fts(rowid, title, body, tags, context)
            VALUES (new.id, new.title, new.body, new.tags, new.context);
        END;
        CREATE TRIGGER IF NOT EXISTS docs_ad AFTER DELETE ON docs BEGIN
            INSERT INTO docs_fts(docs_fts, rowid, title, body, tags, context)
            VALUES ('delete', old.id, old.title, old.body, old.tags, old.context);
        END;
        CREATE TRIGGER IF NOT EXISTS docs_au AFTER UPDATE OF title, body, tags, context ON docs BEGIN
            INSERT INTO docs_fts(docs_fts, rowid, title, body, tags, context)
            VALUES ('delete', old.id, old.title, old.body, old.tags, old.context);
            INSERT INTO docs_fts(rowid, title, body, tags, context)
            VALUES (new.id, new.title, new.body, new.tags, new.context);
        END;
        CREATE TABLE IF NOT EXISTS sources (
            path TEXT PRIMARY KEY,
            mode TEXT NOT NULL,
            ino INTEGER,
            size INTEGER,
            mtime_ns INTEGER,
            offset INTEGER NOT NULL DEFAULT 0,
            anchor BLOB,
            bad_lines INTEGER NOT NULL DEFAULT 0
        );
        CREATE TABLE IF NOT EXISTS bad_lines (
            source TEXT NOT NULL,
            offset INTEGER NOT NULL,
            reason TEXT NOT NULL,
            text TEXT NOT NULL,
            PRIMARY KEY (source, offset)
        );
        """,
    ),
    (
        "002_vectors",
        """
        CREATE TABLE IF NOT EXISTS vectors (
            uid TEXT NOT NULL,
            model TEXT NOT NULL,
            dim INTEGER NOT NULL,
            content_hash TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (uid, model)
        );
        """,
    ),
]

MIGRATIONS.append(
    (
        "003_vocab",
        """
        CREATE VIRTUAL TABLE IF NOT EXISTS docs_vocab USING fts5vocab(docs_fts, 'row');
        """,
    )
)

# How many lines precede `sources.offset`: records parsed incrementally get their
# 1-based line numbers without re-reading the file from the start.
MIGRATIONS.append(("004_source_lines", "ALTER TABLE sources ADD COLUMN lines INTEGER;"))

# Which docs' embedded text may have changed: a sequence number per uid, bumped by
# triggers whenever a doc is inserted, its title or body changes, it is
# (un)superseded or deleted. Vector sync reads the changes past its watermark
# and compares content hashes, so changed text is re-embedded and unchanged text
# never is (an upsert keeps the row id, so a row-id watermark missed updates).
MIGRATIONS.append(
    (
        "005_doc_changes",
        """
        CREATE TABLE IF NOT EXISTS doc_changes (
            uid TEXT PRIMARY KEY,
            seq INTEGER NOT NULL
        );
        CREATE INDEX IF NOT EXISTS doc_changes_seq ON doc_changes(seq);
        CREATE TRIGGER IF NOT EXISTS docs_change_ai AFTER INSERT ON docs BEGIN
            INSERT INTO doc_changes(uid, seq)
            VALUES (new.uid, (SELECT coalesce(max(seq), 0) + 1 FROM doc_changes))
            ON CONFLICT(uid) DO UPDATE SET seq = excluded.seq;
        END;
        CREATE TRIGGER IF NOT EXISTS docs_change_au AFTER UPDATE OF title, body, superseded ON docs
        WHEN old.title IS NOT new.title OR old.body IS NOT new.body
             OR old.superseded IS NOT new.superseded BEGIN
            INSERT INTO doc_changes(uid, seq)
            VALUES (new.uid, (SELECT coalesce(max(seq), 0) + 1 FROM doc_changes))
            ON CONFLICT(uid) DO UPDATE SET seq = excluded.seq;
        END;
        CREATE TRIGGER IF NOT EXISTS docs_change_ad AFTER DELETE ON docs BEGIN
            INSERT INTO doc_changes(uid, seq)
            VALUES (old.uid, (SELECT coalesce(max(seq), 0) + 1 FROM doc_changes))
            ON CONFLICT(uid) DO UPDATE SET seq = excluded.seq;
        END;
        """,
    )
)

MIGRATIONS.append(
    (
        "006_secret_marks",
        # `docs.secret`: the kinds of secret a doc's text looks like it holds (ledger
        # entries; see memstrata.policy.secrets). Forgetting the ledger's offset makes the
        # next sync re-parse it, so entries indexed before this column are marked too.
        """
        ALTER TABLE docs ADD COLUMN secret TEXT;
        DELETE FROM sources WHERE path LIKE '%ledger.jsonl';
        """,
    )
)

# One agent's memory newest first, one layer at a time (the timeline, `assembly.timeline`):
# an ordered index walk per layer instead of sorting every row the agent owns.
MIGRATIONS.append(
    (
        "serve_owner_layer_ts",
        """
        CREATE INDEX IF NOT EXISTS docs_owner_layer_ts ON docs(owner, layer, ts);
        """,
    )
)

# The version of each source as the truth reported it when it was last indexed
# (`files.truth.Entry.version`): an unchanged version means an unchanged source,
# so catching up a truth kept in PostgreSQL costs no read per source.
MIGRATIONS.append(("007_source_version", "ALTER TABLE sources ADD COLUMN version TEXT;"))

# `memstrata init`'s starter AGENT.md and CONTEXT.md are no longer indexed until edited
# (`layers.starters`): forgetting those sources makes the next sync re-parse them, which
# drops the boilerplate docs an index made before still holds.
MIGRATIONS.append(
    (
        "008_unindexed_starters",
        """
        DELETE FROM sources WHERE path LIKE '%/AGENT.md' OR path LIKE '%/CONTEXT.md';
        """,
    )
)

# A CRC-32 of an append source's bytes [0, offset) as indexed (NULL: unknown, rows
# indexed before this column). A source whose size and generation are unchanged but
# whose version is not was edited in place (same length): the CRC says whether the
# indexed prefix still holds, without keeping or re-reading the records.
MIGRATIONS.append(("009_source_prefix_crc", "ALTER TABLE sources ADD COLUMN prefix_crc INTEGER;"))

# Identifier words (search.expand) are patched from `doc_changes` too: a doc whose
# tags or scope columns change without its text changing is a change for them.
MIGRATIONS.append(
    (
        "010_doc_changes_tags_scope",
        """
        CREATE TRIGGER IF NOT EXISTS docs_change_scope_au
        AFTER UPDATE OF tags, layer, owner, room, secret ON docs
        WHEN old.tags IS NOT new.tags OR old.layer IS NOT new.layer
             OR old.owner IS NOT new.owner OR old.room IS NOT new.room
             OR old.secret IS NOT new.secret BEGIN
            INSERT INTO doc_changes(uid, seq)
            VALUES (new.uid, (SELECT coalesce(max(seq), 0) + 1 FROM doc_changes))
            ON CONFLICT(uid) DO UPDATE SET seq = excluded.seq;
        END;
        """,
    )
)

# Vectors per unit (issue 22): a record is embedded whole or as chunks (`index.units`),
# one row per (uid, model, unit). Row ids only grow (AUTOINCREMENT), so a search reads
# just the rows added since it last looked; `vectors_hash` finds a stored vector by the
# hash of its text, so text already embedded under another uid is never embedded again.
# Existing vectors become unit 0 of their record (the same text: not embedded again).
MIGRATIONS.append(
    (
        "015_vector_units",
        """
        CREATE TABLE vectors_units (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            uid TEXT NOT NULL,
            model TEXT NOT NULL,
            unit INTEGER NOT NULL DEFAULT 0,
            dim INTEGER NOT NULL,
            content_hash TEXT NOT NULL,
            vector BLOB NOT NULL,
            UNIQUE (uid, model, unit)
        );
        INSERT INTO vectors_units(uid, model, unit, dim, content_hash, vector)
            SELECT uid, model, 0, dim, content_hash, vector FROM vectors;
        DROP TABLE vectors;
        ALTER TABLE vectors_units RENAME TO vectors;
        CREATE INDEX vectors_hash ON vectors(model, content_hash);
        """,
    )
)

# Neighbour context now joins short messages only (`docs.SHORT_MESSAGE_CHARS`): forgetting
# the transcripts' and channels' offsets makes the next sync re-parse them with it.
MIGRATIONS.append(
    (
        "016_short_neighbour_context",
        """
        DELETE FROM sources WHERE path LIKE '%/sessions/%.jsonl' OR path LIKE '%/channel.jsonl';
        """,
    )
)

# An archived LOG entry's uid names its archive by the store-relative path
# (`archive:agents/<a>/archive/LOG-....md:<id>`), no longer by the path on this host's disk:
# forgetting the LOG archives makes the next sync re-parse them under the new uids (the
# whole-file re-parse deletes the old rows first).
MIGRATIONS.append(
    (
        "webapp_relative_archive_uids",
        """
        DELETE FROM sources WHERE path LIKE '%/archive/LOG-%';
        """,
    )
)

# Records of some kinds in force, counted and paged (`layers.decisions.Decisions.tally`, the
# web app's home page): an index walk, not a pass over every ledger entry.
MIGRATIONS.append(
    (
        "webapp_ledger_kinds",
        """
        CREATE INDEX IF NOT EXISTS docs_layer_kind ON docs(layer, kind, superseded, room, ts);
        """,
    )
)

# Token vectors beside each unit's pooled vector (issue 22, `index.tokens`: MaxSim over the
# candidate pool): int8 word-piece vectors of the unit's text, from the same forward pass,
# NULL where the embedder gives none. Rows embedded before get theirs when their text
# changes or on `memstrata reindex --vectors`; until then they are scored without MaxSim.
MIGRATIONS.append(("fusion_vector_tokens", "ALTER TABLE vectors ADD COLUMN tokens BLOB;"))

# A lighter write per record (issue 21 item 7): `docs_owner (owner, layer)` is a prefix of
# `docs_owner_layer_ts (owner, layer, ts)`, which serves every query it served, and
# `doc_changes` is keyed by its sequence number (one b-tree and the uid's unique index
# instead of a table, its uid key and a separate index on seq): readers ask for ranges of
# seq and its maximum, both now a walk of the table itself. Two to three pages fewer per
# commit of an append.
MIGRATIONS.append(
    (
        "017_slim_write",
        """
        DROP INDEX IF EXISTS docs_owner;
        DROP TRIGGER IF EXISTS docs_change_ai;
        DROP TRIGGER IF EXISTS docs_change_au;
        DROP TRIGGER IF EXISTS docs_change_ad;
        DROP TRIGGER IF EXISTS docs_change_scope_au;
        CREATE TABLE doc_changes_by_seq (seq INTEGER PRIMARY KEY, uid TEXT NOT NULL UNIQUE);
        INSERT INTO doc_changes_by_seq(seq, uid) SELECT seq, uid FROM doc_changes;
        DROP TABLE doc_changes;
        ALTER TABLE doc_changes_by_seq RENAME TO doc_changes;
        CREATE TRIGGER docs_change_ai AFTER INSERT ON docs BEGIN
            INSERT INTO doc_changes(uid, seq)
            VALUES (new.uid, (SELECT coalesce(max(seq), 0) + 1 FROM doc_changes))
            ON CONFLICT(uid) DO UPDATE SET seq = excluded.seq;
        END;
        CREATE TRIGGER docs_change_au AFTER UPDATE OF title, body, superseded ON docs
        WHEN old.title IS NOT new.title OR old.body IS NOT new.body
             OR old.superseded IS NOT new.superseded BEGIN
            INSERT INTO doc_changes(uid, seq)
            VALUES (new.uid, (SELECT coalesce(max(seq), 0) + 1 FROM doc_changes))
            ON CONFLICT(uid) DO UPDATE SET seq = excluded.seq;
        END;
        CREATE TRIGGER docs_change_ad AFTER DELETE ON docs BEGIN
            INSERT INTO doc_changes(uid, seq)
            VALUES (old.uid, (SELECT coalesce(max(seq), 0) + 1 FROM doc_changes))
            ON CONFLICT(uid) DO UPDATE SET seq = excluded.seq;
        END;
        CREATE TRIGGER docs_change_scope_au
        AFTER UPDATE OF tags, layer, owner, room, secret ON docs
        WHEN old.tags IS NOT new.tags OR old.layer IS NOT new.layer
             OR old.owner IS NOT new.owner OR old.room IS NOT new.room
             OR old.secret IS NOT new.secret BEGIN
            INSERT INTO doc_changes(uid, seq)
            VALUES (new.uid, (SELECT coalesce(max(seq), 0) + 1 FROM doc_changes))
            ON CONFLICT(uid) DO UPDATE SET seq = excluded.seq;
        END;
        """,
    )
)

# Rows kept between searches (`search.rowmemo`) follow `doc_changes` for what it covers and
# this feed for the rest: the uid of a doc whose other columns a search reads (kind, ts,
# source, line, meta, thread, pos) changed while none that `doc_changes` follows did (a
# rewrite shifting a LOG's lines, an entry moved to an archive). Not in `doc_changes`,
# which marks a record's vectors dirty; an append writes neither this nor more than before.
MIGRATIONS.append(
    (
        "018_doc_touches",
        """
        CREATE TABLE IF NOT EXISTS doc_touches (seq INTEGER PRIMARY KEY, uid TEXT NOT NULL UNIQUE);
        CREATE TRIGGER IF NOT EXISTS docs_touch_au
        AFTER UPDATE OF kind, ts, source, line, meta, thread, pos ON docs
        WHEN (old.kind IS NOT new.kind OR old.ts IS NOT new.ts OR old.source IS NOT new.source
              OR old.line IS NOT new.line OR old.meta IS NOT new.meta
              OR old.thread IS NOT new.thread OR old.pos IS NOT new.pos)
             AND old.title IS new.title AND old.body IS new.body
             AND old.superseded IS new.superseded AND old.tags IS new.tags
             AND old.layer IS new.layer AND old.owner IS new.owner
             AND old.room IS new.room AND old.secret IS new.secret BEGIN
            INSERT INTO doc_touches(uid, seq)
            VALUES (new.uid, (SELECT coalesce(max(seq), 0) + 1 FROM doc_touches))
            ON CONFLICT(uid) DO UPDATE SET seq = excluded.seq;
        END;
        """,
    )
)

# The index never holds a secret's text (`index.masked`): forgetting every source makes the
# next sync re-parse it, so docs indexed before hold `[withheld: <kind>]` where they held a
# secret (`memstrata reindex` also rebuilds FTS5's segments without the old tokens).
MIGRATIONS.append(("019_masked_secrets", "DELETE FROM sources;"))
