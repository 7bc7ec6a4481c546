# SPDX-License-Identifier: Apache-2.0
"""fpga_claim(): an allocated ResourceClaim for one device of the FPGA driver
(fpga.dralet.dev) with an opaque FpgaConfig from the claim, as the scheduler
leaves it: what the FPGA integration tests hand to `dralet ctl prepare`."""

DRIVER = "fpga.dralet.dev"


def fpga_claim(name, uid, device, config, node="node-1"):
    """CONFIG: the FpgaConfig's fields (bitstream, onUnprepare, ...)."""
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default", "uid": uid},
        "spec": {"devices": {"requests": [{"name": "fpga", "exactly": {
            "deviceClassName": DRIVER}}]}},
        "status": {"allocation": {"devices": {
            "results": [{"request": "fpga", "driver": DRIVER, "pool": node,
                         "device": device}],
            "config": [{"source": "FromClaim", "requests": ["fpga"], "opaque": {
                "driver": DRIVER, "parameters": dict(
                    {"apiVersion": DRIVER + "/v1alpha1", "kind": "FpgaConfig"},
                    **config)}}]}}},
    }
