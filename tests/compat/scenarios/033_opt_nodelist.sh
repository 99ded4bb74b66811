# -w/--nodelist places the job on the named nodes; -x/--exclude keeps it off them; unknown
# names are errors.
run sbatch -w node2 -o w.out --wrap 'echo "$SLURMD_NODENAME $SLURM_JOB_NODELIST"'
wait_done "$J"
fields "$J" ReqNodeList ExcNodeList NodeList
run sbatch -x node1 -o x.out --wrap 'echo "$SLURMD_NODENAME $SLURM_JOB_NODELIST"'
wait_done "$J"
fields "$J" ReqNodeList ExcNodeList NodeList
run sbatch --nodelist=node[2-3] -o w23.out --wrap 'echo "$SLURM_JOB_NODELIST $SLURM_JOB_NUM_NODES"'
wait_done "$J"
fields "$J" ReqNodeList ExcNodeList NodeList NumNodes
run sbatch --exclude=node[1-2] -N 1 -o x12.out --wrap 'echo "$SLURM_JOB_NODELIST"'
wait_done "$J"
fields "$J" ReqNodeList ExcNodeList NodeList
show_outputs
run sbatch -w node9 --wrap true
run sbatch -x nodeX --wrap true
run sbatch -w node1 -p short -N 2 --wrap true
