"""Run the `kernels` CLI where its signature-checking dependencies are absent (the H200
image has neither cryptography nor sigstore, and no network to fetch them). kernels imports
them at CLI start-up only for `kernels verify-signature`; stand-ins let every other
subcommand run unchanged:

    python scripts/kernels_cli_offline.py benchmark . --output out.json
"""

import sys
import types

for name, names in {
    "cryptography": [], "cryptography.x509": ["Certificate"],
    "sigstore": [], "sigstore.errors": ["VerificationError"],
    "sigstore.models": ["Bundle", "InvalidBundle"],
    "sigstore.verify": ["Verifier", "policy"], "sigstore.verify.policy": ["VerificationPolicy"],
}.items():
    try:
        __import__(name)
    except ImportError:
        module = sys.modules.setdefault(name, types.ModuleType(name))
        for attribute in names:
            setattr(module, attribute, type(attribute, (Exception,), {}))

from kernels.cli import main  # noqa: E402

sys.argv[0] = "kernels"
sys.exit(main())
