# srun -i/-o/-e files that cannot be opened. A name the same for every task: srun's own
# "Could not open stdout file" line, exit 1, the job cancelled (one task, tasks sharing the file
# on two nodes, labelled, stderr only). A name per task or node: "task N launch failed: Slurmd
# could not connect IO" per task, exit 0, the job COMPLETED. No task runs. Each srun waits for
# an empty queue first (see 098).
run srun -n1 -o /nonexistent-dir/out.txt touch ran.txt
wait_queue_empty
run srun -N2 -n3 -o /nonexistent-dir/out.txt touch ran.txt
wait_queue_empty
run srun -N2 -n3 -l -o /nonexistent-dir/out.txt touch ran.txt
wait_queue_empty
run srun -n1 -e /nonexistent-dir/err.txt touch ran.txt
wait_queue_empty
run ls
run_sorted srun -N2 -n3 -o "/nonexistent-dir/out.%t" touch ran.txt
wait_queue_empty
run_sorted srun -N2 -n3 -o "/nonexistent-dir/out.%N" touch ran.txt
wait_queue_empty
run ls
run_sorted srun -N2 -n3 -i '/nonexistent-dir/in.%t' cat
wait_queue_empty
run_sorted srun -N2 -n3 -l -o '/nonexistent-dir/out.%t' touch ran.txt
wait_queue_empty
run squeue -h -t all -n touch,cat -o "%T %j %C"
