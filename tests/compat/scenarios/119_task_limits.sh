# The submitting shell's soft resource limits and umask reach the tasks and the batch shell
# (PropagateResourceLimits=ALL, the default; `ulimit -c 0` gives them a core limit of 0);
# --propagate names which limits go instead; bad names are refused. Only limits that are
# propagated are shown: the others are the node daemon's own, which differ by design.
quiet sh -c 'for i in $(seq 100); do [ "$(sinfo -h -o %t | sort -u)" = idle ] && exit 0; sleep 0.1; done'
run_sorted bash -c 'ulimit -S -c 0; ulimit -S -n 512; ulimit -S -s 4096; umask 027; srun -N2 -n2 bash -c "ulimit -c -n -s; umask; printenv | grep SLURM_RLIMIT; true"'
wait_queue_empty
run bash -c 'ulimit -S -n 300; ulimit -S -c 0; srun --propagate=NOFILE,CORE bash -c "ulimit -n -c"'
wait_queue_empty
run bash -c 'ulimit -S -n 301; srun --propagate=NOFILE bash -c "ulimit -n"'
wait_queue_empty
run bash -c 'ulimit -S -c 0; ulimit -S -n 400; umask 077; sbatch -W -o lim.out --wrap "ulimit -c -n; umask; srun bash -c \"ulimit -c -n; umask\""'
show_file lim.out
run bash -c 'ulimit -S -n 333; sbatch -W -o lim2.out --propagate=NOFILE --wrap "ulimit -n"'
show_file lim2.out
run srun --propagate=FOO true
run srun --propagate=core,NOFILE true
run sbatch --propagate=FOO --wrap true
run squeue -h
