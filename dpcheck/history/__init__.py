"""``dpcheck history``: the DP library's behaviour at every release tag of its git repository.

For each tag (sorted as versions) the library's files are read as git blobs (no checkout),
summarised once per distinct blob through the scan cache, and classified with the same
classifiers that scan user code (``dpcheck.pipelines.library``). The rows can be grouped into
ranges and rendered as Markdown, JSON, CSV or text.

Cache directory: ``--cache-dir`` if given; else ``.dpcheck_cache`` in the repository's work tree
when it has one and it is writable (the directory ``dpcheck scan`` of that tree uses, so both
share entries); else the user cache ``$XDG_CACHE_HOME/dpcheck`` (``~/.cache/dpcheck``), which
is where a bare mirror's history goes: dpcheck never writes inside a git directory.
"""

FORMATS = ("md", "json", "csv", "text", "version-table")
"""The output formats of ``dpcheck history`` (importing this package loads nothing heavy)."""
