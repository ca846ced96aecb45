"""Benchmark: schedule 1,000 pods on 1,000 nodes with the default profile (issue 3's target).

Nodes: 4 CPU / 16Gi / 110 pods, hostname and zone labels (3 zones). Pods: 100m / 200Mi, a hard
zone constraint (maxSkew 1) and a soft hostname constraint, one Deployment's worth of labels.
Prints `schedule/1000Nodes_1000Pods: N pods/s, peak RSS M MiB`.
"""

from __future__ import annotations

import resource
import sys
import time

import msgspec

from topospread.api.types import Node, Pod
from topospread.framework.config import default_config
from topospread.simulator.run import schedule
from topospread.simulator.scenario import Scenario


def make_nodes(n: int, zones: int = 3) -> list[Node]:
    return [
        msgspec.convert(
            {
                "metadata": {
                    "name": f"node-{i}",
                    "labels": {
                        "kubernetes.io/hostname": f"node-{i}",
                        "topology.kubernetes.io/zone": f"zone-{i % zones}",
                    },
                },
                "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}},
            },
            Node,
        )
        for i in range(n)
    ]


def make_pods(n: int) -> list[Pod]:
    selector = {"matchLabels": {"app": "web"}}
    return [
        msgspec.convert(
            {
                "metadata": {"name": f"web-{i}", "namespace": "default", "labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {
                            "name": "c",
                            "image": "web",
                            "resources": {"requests": {"cpu": "100m", "memory": "200Mi"}},
                        }
                    ],
                    "topologySpreadConstraints": [
                        {
                            "maxSkew": 1,
                            "topologyKey": "topology.kubernetes.io/zone",
                            "whenUnsatisfiable": "DoNotSchedule",
                            "labelSelector": selector,
                        },
                        {
                            "maxSkew": 1,
                            "topologyKey": "kubernetes.io/hostname",
                            "whenUnsatisfiable": "ScheduleAnyway",
                            "labelSelector": selector,
                        },
                    ],
                    "priority": 0,
                },
            },
            Pod,
        )
        for i in range(n)
    ]


def main() -> None:
    nodes_n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    pods_n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    scenario = Scenario(
        nodes=make_nodes(nodes_n),
        pods=[],
        queue=make_pods(pods_n),
        objects=[],
        config=default_config(),
    )
    start = time.perf_counter()
    run = schedule(scenario)
    elapsed = time.perf_counter() - start
    bound = len(run.bound)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"schedule/{nodes_n}Nodes_{pods_n}Pods: {bound / elapsed:,.0f} pods/s "
        f"({bound} bound in {elapsed:.1f} s), peak RSS {rss:,.0f} MiB"
    )


if __name__ == "__main__":
    main()
