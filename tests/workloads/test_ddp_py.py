"""reference_workloads/pytorch/ddp.py: the one-GPU rule for NCCL, which must
match launch_env.h's (tests/workloads/test_launch_env.cpp). Needs no PyTorch:
the module imports it only inside main()."""

import importlib.util
import os
import sys
import unittest

sys.dont_write_bytecode = True  # nothing written into the checkout
HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "ddp", os.path.join(HERE, "..", "..", "reference_workloads", "pytorch", "ddp.py"))
ddp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ddp)


class SharedGpuNcclEnv(unittest.TestCase):
    def test_enough_gpus_change_nothing(self):
        self.assertEqual(ddp.shared_gpu_nccl_env(1, 8, 8, 8, {}), {})
        self.assertEqual(ddp.shared_gpu_nccl_env(0, 1, 1, 1, {}), {})
        self.assertEqual(ddp.shared_gpu_nccl_env(1, 2, 0, 1, {}), {})  # the launcher did not say

    def test_ranks_sharing_a_gpu_look_like_hosts_of_their_own(self):
        self.assertEqual(ddp.shared_gpu_nccl_env(0, 2, 2, 1, {}),
                         {"NCCL_HOSTID": "osc-rank0", "NCCL_SOCKET_IFNAME": "lo"})
        self.assertEqual(ddp.shared_gpu_nccl_env(5, 8, 4, 2, {}), {"NCCL_HOSTID": "osc-rank5"})

    def test_what_the_user_set_is_kept(self):
        self.assertEqual(ddp.shared_gpu_nccl_env(1, 2, 2, 1, {"NCCL_HOSTID": "mine"}), {"NCCL_SOCKET_IFNAME": "lo"})


if __name__ == "__main__":
    sys.exit(unittest.main())
