# SPDX-License-Identifier: GPL-2.0
"""tdc's local settings for desync.json, copied next to tdc.py.

tdc runs every command with ENVIR as its whole environment (empty by
default): tc then finds neither the desync plugin nor ip and ping.
"""

import os

ENVIR = {
    'PATH': '/usr/sbin:/usr/bin:/sbin:/bin',
    'TC_LIB_DIR': os.environ['TC_LIB_DIR'],
}
