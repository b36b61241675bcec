"""Shared test configuration: Hypothesis profiles and the shared-data location."""

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# `dev` keeps the edit-test loop fast; `ci` runs more examples with a fixed seed
# (derandomize) so any failure in CI reproduces byte for byte on a laptop.
settings.register_profile("dev", max_examples=50)
settings.register_profile(
    "ci",
    max_examples=300,
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


@pytest.fixture
def shared_sessions() -> Path:
    """The real sessions beside the checkout; skip when this is a user's clone."""
    path = SHARED_DATA / "sessions"
    if not path.is_dir():
        pytest.skip(f"../shared/data/sessions not found at {path} (only present in CI)")
    return path
