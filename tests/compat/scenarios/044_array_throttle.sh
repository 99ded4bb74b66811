# %N throttle: at most N tasks run at once; the rest pend with Reason=JobArrayTaskLimit and
# squeue shows J_[3-4%2]; ArrayTaskThrottle= in scontrol.
run sbatch --array=1-4%2 -o /dev/null --wrap 'sleep 3'
wait_field "$J" Reason JobArrayTaskLimit 15
run squeue -h -o '%i %T %r' -j "$J"
fields "$J" ArrayTaskId ArrayTaskThrottle JobState Reason
wait_done "$J" 40
fields "$J" ArrayTaskId ArrayTaskThrottle JobState ExitCode
