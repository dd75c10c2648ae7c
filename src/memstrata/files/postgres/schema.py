"""The PostgreSQL schema of a store's truth: named migrations, applied on start.

    memstrata_sources   one row per source or folder: path, parent folder, generation
                        (new on every whole rewrite), version (+1 on every write), size,
                        mtime, the last two bytes (`tail`, for the blank-line and
                        torn-tail rules of appends) and the client id of the last rewrite
    memstrata_chunks    the bytes of a source as chunks [start, stop): an append adds one,
                        a rewrite replaces them all by one; `record_id` (unique, made by
                        the client) recognises a retried append
    memstrata_changes   the global change feed: seq (bigserial) and path, one row per
                        write, in commit order (the writer holds `FEED_LOCK` from the row
                        to the commit), announced with NOTIFY on CHANNEL as "seq path"
    memstrata_feed      one row: the feed's id and the highest seq pruned from it

Migrations are (name, SQL) pairs applied in order, each once, recorded in
`memstrata_migrations`, under an advisory lock so hosts starting together apply
them once.
"""

from __future__ import annotations

CHANNEL = "memstrata_changes"
FEED_LOCK = 0x6D656D7374726174  # pg_advisory_xact_lock key: one writer at a time on the feed
MIGRATION_LOCK = 0x6D656D7374726175

MIGRATIONS: list[tuple[str, str]] = [
    (
        "001_truth",
        """
        CREATE SEQUENCE IF NOT EXISTS memstrata_generation;
        CREATE TABLE IF NOT EXISTS memstrata_sources (
            id bigserial PRIMARY KEY,
            path text NOT NULL UNIQUE,
            parent text NOT NULL,
            is_dir boolean NOT NULL DEFAULT false,
            generation bigint NOT NULL DEFAULT nextval('memstrata_generation'),
            version bigint NOT NULL DEFAULT 0,
            size bigint NOT NULL DEFAULT 0,
            mtime double precision NOT NULL DEFAULT extract(epoch from clock_timestamp()),
            tail bytea NOT NULL DEFAULT '',
            write_id text
        );
        CREATE INDEX IF NOT EXISTS memstrata_sources_parent ON memstrata_sources (parent);
        CREATE INDEX IF NOT EXISTS memstrata_sources_prefix
            ON memstrata_sources (path text_pattern_ops);
        CREATE TABLE IF NOT EXISTS memstrata_chunks (
            source_id bigint NOT NULL REFERENCES memstrata_sources(id) ON DELETE CASCADE,
            start bigint NOT NULL,
            stop bigint NOT NULL,
            data bytea NOT NULL,
            record_id text,
            PRIMARY KEY (source_id, start)
        );
        CREATE INDEX IF NOT EXISTS memstrata_chunks_stop ON memstrata_chunks (source_id, stop);
        CREATE UNIQUE INDEX IF NOT EXISTS memstrata_chunks_record
            ON memstrata_chunks (record_id) WHERE record_id IS NOT NULL;
        CREATE TABLE IF NOT EXISTS memstrata_changes (
            seq bigserial PRIMARY KEY,
            path text NOT NULL,
            at timestamptz NOT NULL DEFAULT now()
        );
        """,
    ),
]

# The feed's identity and how far it was pruned: a host's cursor (feed id, seq) is good
# only for this feed (a recreated database, or a TRUNCATE, makes a new id) and only
# while nothing after it was pruned.
MIGRATIONS.append(
    (
        "002_feed",
        """
        CREATE TABLE IF NOT EXISTS memstrata_feed (
            one boolean PRIMARY KEY DEFAULT true CHECK (one),
            id text NOT NULL,
            pruned_through bigint NOT NULL DEFAULT 0
        );
        INSERT INTO memstrata_feed (id) VALUES (gen_random_uuid()::text) ON CONFLICT DO NOTHING;
        """,
    )
)

KEEP_CHANGES = "7 days"  # older change-feed rows are pruned on start (hosts rescan instead)
