# --begin a few seconds ahead: the job waits, then runs by itself.
run sbatch --begin=now+3 -o begin.out --wrap 'echo began'
wait_field "$J" Reason BeginTime 10
fields "$J" JobState Reason
wait_done "$J" 30
fields "$J" JobState Reason ExitCode
show_outputs
