# scontrol reconfigure: silent with status 0 for root; another user is refused; the partitions
# slurm.conf defines are as before (the cluster is shared by all scenarios: the file is not
# changed here, see tests/integration/test_reconfigure.py for changes).
run_as drovertest scontrol reconfigure
run scontrol reconfigure
run scontrol reconfig
run scontrol reconfigure now
run scontrol show partition short
