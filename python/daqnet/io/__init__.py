"""Files: strict text input, atomic output, and one writer per kind of result table."""
