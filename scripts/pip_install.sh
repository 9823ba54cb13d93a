#!/usr/bin/env bash
# <python> <pip install arguments>...: `<python> -m pip install -q <arguments>`, tried up to three
# times. A large wheel's download can break off where pip's own resumes cannot get past (once in
# CI: cudnn's 0.7 GB wheel at 540.8 MB, through all six of pip's attempts); a new pip process
# starts it again. The test, release, noarch-torch and bench venvs are filled through here
# (kernels_minver.sh installs each old kernels on its own, logging and skipping a failure).
set -uo pipefail
python=$1
shift
for attempt in 1 2 3; do
  "$python" -m pip install -q "$@" && exit 0
  [ "$attempt" -lt 3 ] && echo "pip_install.sh: pip install $* failed (try $attempt of 3), again" >&2
done
exit 1
