"""`python -m compaction`: the same as the `compaction` command."""

from compaction.cli import main

if __name__ == "__main__":
    main()
