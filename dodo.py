from bceval.dodo import *  # noqa: F401,F403
