"""The integrations' tests share helpers that live beside them (``agents_items.py``)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
