#!/bin/sh
# campaign.sh BUILD_DIR [SECONDS_PER_TARGET] - the long fuzzing campaign
# for the hardening note: run.sh with 10 minutes per target by default
# (about 80 minutes for the 8 targets); same table of execs and coverage.
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/run.sh" "${1:?usage: campaign.sh BUILD_DIR [SECONDS_PER_TARGET]}" "${2:-600}"
