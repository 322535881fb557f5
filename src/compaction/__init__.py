"""compaction."""
