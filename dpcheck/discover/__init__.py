"""Discovery: which files a scan reads, and the facts of the scanned project.

``files`` lists the Python and dependency files (git-aware, config globs); ``pins`` reads the
pinned versions of the DP libraries from dependency files; ``installed`` finds an installed DP
library's source as files; ``facts`` bundles pins and installed sources into ``ProjectFacts``.
Nothing here imports or executes the scanned project.
"""
