"""Export and import: a store's files as a portable archive, verified before it is trusted.

* `export_store(store, target)`: every file that is memory (plus config and the
  audit trail, for the record) to a new folder or `.tar.gz`, with a manifest
  (`memstrata-export.json`: path, size, sha256 of every member).
* `import_archive(store, source)`: the reverse, and the archive is not trusted.
  The manifest is required and must list every member with its sha256
  (`unverified=True` accepts an archive without one; every other check still
  holds). Member names must be plain relative paths (no absolute names, `..`,
  control characters, duplicates, or a file where a folder is needed). Caps on the
  member count and on per-file and total uncompressed size (`[import]` settings)
  are checked before a member is read, and bytes are counted while streaming.
  Settings (`config.toml`: roles are privileges), another store's audit trail and
  the derived index are never taken from an archive.
* Atomic: members are streamed into `<home>/.imports/<id>/` (same filesystem),
  checked, then a `COMMIT` marker is written and the files are renamed into place.
  A process killed before the marker leaves the store as it was (the staging
  folder is removed by the next open); killed after it, the next open finishes the
  moves (`recover_imports`). Files identical to the store's are not clashes, so
  importing an export of the same store is a no-op.

Adapters (CLI now, HTTP later) call these functions and only translate.
"""

from __future__ import annotations

from memstrata.operations.transfer.exporter import ExportReport, export_store
from memstrata.operations.transfer.importer import ImportReport, import_archive, recover_imports
from memstrata.operations.transfer.members import MANIFEST, is_tarball

__all__ = [
    "MANIFEST",
    "ExportReport",
    "ImportReport",
    "export_store",
    "import_archive",
    "is_tarball",
    "recover_imports",
]
