# SPDX-License-Identifier: LGPL-2.1-or-later
"""The coding env for OpenEnv's client: `from coding_env import CodingEnv, CodingAction`."""
from .client import CodingEnv
from .models import CodingAction, CodingObservation, CodingState

__all__ = ["CodingAction", "CodingEnv", "CodingObservation", "CodingState"]
