"""The sandbox's settings (sandbox/settings.py): its limits are checked when made."""

from __future__ import annotations

import attrs
import pytest
from ohseven.referee.sandbox.settings import Limits


class TestConfig:
    @pytest.mark.parametrize("field", [f.name for f in attrs.fields(Limits)])
    def test_limits_must_be_positive(self, field):
        """Every limit rejects zero."""
        with pytest.raises(ValueError, match=field):
            Limits(**{field: 0})
