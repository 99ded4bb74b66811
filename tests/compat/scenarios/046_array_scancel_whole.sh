# scancel of an array's id cancels every task, pending and running.
run sbatch --array=1-4 -o /dev/null --wrap 'exec sleep 30'
wait_field "$J" Reason Resources 15
run squeue -h -o '%i %T %r' -j "$J"
run scancel "$J"
wait_done "$J"
fields "$J" ArrayTaskId JobState Reason ExitCode
run squeue -h -j "$J"
