# cluster: cgroup
# Confinement as TaskPlugin=task/cgroup + ProctrackType=proctrack/cgroup with cgroup.conf's
# ConstrainCores, ConstrainRAMSpace (AllowedRAMSpace=50), ConstrainSwapSpace
# (AllowedSwapSpace=50) configure it: a task sees only the CPUs its job or step holds, and its
# memory cgroup's effective limits (memory.stat's hierarchical_* lines, so that where each side
# puts the limit in its tree does not matter) are 50% of what the job holds, RAM+swap 50% more.
# A batch job beyond its limit ends OUT_OF_MEMORY with slurmstepd's line in its output.
# Real Slurm confines here too: each slurmd under slurm_<node> of the host's v1 hierarchies.
script limits.sh <<'S'
#!/bin/bash
d=/sys/fs/cgroup/memory$(awk -F: '$2=="memory"{print $3}' /proc/self/cgroup)
awk '$1=="hierarchical_memory_limit"||$1=="hierarchical_memsw_limit"{print $1, $2/1048576 "M"}' $d/memory.stat
echo cpus $(nproc)
S
quiet sh -c 'for i in $(seq 100); do [ "$(sinfo -h -o %t | sort -u)" = idle ] && exit 0; sleep 0.1; done'
run sbatch -W -c1 --mem=200M -o b1.out ./limits.sh
show_file b1.out
run sbatch -W -c2 --mem-per-cpu=150M -o b2.out ./limits.sh
show_file b2.out
run srun -c1 --mem=300M ./limits.sh
run srun -n2 -c1 --mem=100M bash -c 'echo cpus $(nproc)'
run sbatch -W -c2 --mem=400M -o b3.out --wrap 'srun -n1 -c1 --mem=100M ./limits.sh; srun -n1 -c2 ./limits.sh'
show_file b3.out
run sbatch -W --mem=200M -o oom.out --wrap "python3 -c \"x = b'x' * (150 << 20)\""
show_file oom.out
fields "$J" JobState Reason ExitCode
wait_queue_empty
