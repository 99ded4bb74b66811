"""GPUs per job on a live cluster, as Slurm 22.05 (select/cons_tres) refuses, places and shows
them (checked on the oracle: 4 nodes of 4 CPUs and two GPUs)."""
import re


def gpu_cluster(make_cluster):
    return make_cluster(nodes=4, cpus=4, mem=4000, settings=["GresTypes=gpu"],
                        node_conf={k: "Gres=gpu:2" for k in range(1, 5)})


def node_lines(c, job_id):
    out = c.ok("scontrol", "-d", "show", "job", str(job_id))
    return [re.sub(r"CPU_IDs=\S+ ", "", line.strip()) for line in out.splitlines()
            if line.strip().startswith("Nodes=node")]


def test_gpus_fewer_than_nodes_refused(make_cluster):
    c = gpu_cluster(make_cluster)
    p = c.run("sbatch", "-N2", "--gpus=1", "--wrap", "true")
    assert p.returncode == 1
    assert p.stderr.splitlines() == [
        "sbatch: error: Failed to validate job spec, --gpus < -N",
        "sbatch: error: Invalid generic resource (gres) specification",
    ]
    p = c.run("sbatch", "-N1-3", "-n5", "--gpus=1", "--wrap", "true")
    assert p.returncode == 1
    assert "Requested node configuration is not available" in p.stderr


def test_gpus_placed_and_shown_as_slurm_does(make_cluster):
    c = gpu_cluster(make_cluster)
    # Five tasks and one GPU: the first node's four tasks get none, the second node the GPU.
    j = c.sbatch("-n5", "--gpus=1", "--mem-per-cpu=100", "--wrap", "sleep 30")
    c.wait_state(j, "RUNNING")
    assert node_lines(c, j) == ["Nodes=node1 Mem=400 GRES=(null)",
                                "Nodes=node2 Mem=100 GRES=gpu:1(IDX:0)"]
    c.ok("scancel", str(j))
    c.wait_all_done([j])


def test_small_job_not_split_beside_a_busy_node(make_cluster):
    c = gpu_cluster(make_cluster)
    busy = c.sbatch("-w", "node1", "-n3", "--mem=100", "--wrap", "sleep 60")
    c.wait_state(busy, "RUNNING")
    # node1 has one CPU left: -n2 goes to node2 whole, not one task on each.
    j = c.sbatch("-n2", "--mem-per-cpu=100", "--wrap", "sleep 60")
    c.wait_state(j, "RUNNING")
    assert node_lines(c, j) == ["Nodes=node2 Mem=200 GRES="]
    c.ok("scancel", str(busy), str(j))
    c.wait_all_done([busy, j])
    # -n3 --gpus=3 passes over node1 with one GPU left: two GPUs on node2, one on node3.
    busy = c.sbatch("-w", "node1", "-n1", "--mem=100", "--gpus-per-node=1", "--wrap", "sleep 60")
    c.wait_state(busy, "RUNNING")
    g = c.sbatch("-n3", "--gpus=3", "--mem-per-cpu=100", "--wrap", "sleep 60")
    c.wait_state(g, "RUNNING")
    assert node_lines(c, g) == ["Nodes=node2 Mem=200 GRES=gpu:2(IDX:0-1)",
                                "Nodes=node3 Mem=100 GRES=gpu:1(IDX:0)"]
