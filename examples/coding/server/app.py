# SPDX-License-Identifier: LGPL-2.1-or-later
"""The coding env's server, built with OpenEnv's own framework (create_app):
/reset, /step, /state, /ws, /health, /schema — uvicorn server.app:app."""
from openenv.core.env_server import create_app

try:  # as a package (in-repo) or standalone (uvicorn server.app:app)
    from ..models import CodingAction, CodingObservation
    from .coding_environment import CodingEnvironment
except ImportError as e:
    if "relative import" not in str(e) and "no known parent package" not in str(e):
        raise
    from models import CodingAction, CodingObservation
    from server.coding_environment import CodingEnvironment

# The class, not an instance: OpenEnv makes one per WebSocket session.
app = create_app(CodingEnvironment, CodingAction, CodingObservation, env_name="coding_env")
