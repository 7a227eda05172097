"""python -m daqnet.scenario SECTION: the documentation table of a section's keys."""

import sys

from .schema import markdown_table

print(markdown_table(sys.argv[1] if len(sys.argv) > 1 else "bench"))
