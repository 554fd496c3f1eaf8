"""The peers by family (cpu, gpu, built from source, the user's own) and the list
the runner chooses from, in the order the tables show them."""
from .base import Peer
from .built import (Chamfer3dChamfer, MsnEmd, PointceptSerialize, Pointnet2Ball, Pointnet2Fps,
                    Pointnet2ThreeNN, PytorchEmd,
                    Pytorch3dBall, Pytorch3dChamfer, Pytorch3dFps, Pytorch3dKnn, Pytorch3dKnnK,
                    TorchClusterFps, TorchClusterGrid, TorchClusterKnn, TorchClusterKnnK,
                    TorchClusterNearest, TorchClusterRadius)
from .cpu import CKDTree, Fpsample, PotEMD, PyKDTree, ScipyLSA
from .gpu import (GeomlossSinkhorn, KeopsChamfer, KeopsKnn, KeopsNN, PcbenchPython, TorchCdist,
                  TorchCdistBall, TorchCdistChamfer, TorchCdistKnn, TorchFps, TorchGrid,
                  TorchSerialize)
from .user import UserPeer

__all__ = ["PEERS", "Peer", "UserPeer"]

PEERS = [Fpsample(False), Fpsample(True), CKDTree(1), CKDTree(-1), PyKDTree(), TorchCdist(), ScipyLSA(), PotEMD(),
         GeomlossSinkhorn(), TorchFps(), Pytorch3dFps(), TorchClusterFps(), Pointnet2Fps(), Pytorch3dKnn(),
         TorchClusterNearest(), TorchClusterKnn(), KeopsNN(), MsnEmd("eval"), MsnEmd("train"), PytorchEmd(),
         TorchCdistChamfer(), Pytorch3dChamfer(), Chamfer3dChamfer(), KeopsChamfer(), TorchCdistKnn(), Pytorch3dKnnK(),
         TorchClusterKnnK(), KeopsKnn(), Pointnet2ThreeNN(), PcbenchPython("fps"), PcbenchPython("nn"),
         PcbenchPython("emd"), PcbenchPython("chamfer"), PcbenchPython("knn"), TorchCdistBall(),
         Pytorch3dBall(), Pointnet2Ball(), TorchClusterRadius(), PcbenchPython("ball"), TorchGrid(),
         TorchClusterGrid(),
         PcbenchPython("grid"), TorchSerialize(), PointceptSerialize(),
         PcbenchPython("serialize")]
