# salloc: its messages (on stderr), its exit status (the command's; 1 when the command
# cannot be run; 0 or 1 when it is killed by a signal), the environment it gives the command,
# srun inside it, no command (the user's login shell, not $SHELL, runs and reads stdin), and
# its errors.
run salloc -N2 -n2 bash -c 'env > salloc.env; srun -l bash -c "env | grep -E \"^(SLURM|SRUN_|TMPDIR=)\" " | sort > srun.env'
show_env salloc.env TMPDIR SHELL
show_file srun.env
wait_queue_empty
run salloc -N1 bash -c 'exit 3'
wait_queue_empty
fields "$J" JobState Reason ExitCode JobName BatchFlag Command
run salloc -N1 -J named printenv SLURM_JOB_NAME
wait_queue_empty
run salloc -N1 no-such-command-xyz
wait_queue_empty
for sig in HUP INT QUIT KILL TERM USR1; do
  run salloc -N1 bash -c "kill -$sig \$\$"
  wait_queue_empty
  fields "$J" JobState Reason ExitCode
done
file cmds.txt <<'S'
echo "shell $0, job $SLURM_JOB_ID"
exit 4
S
note "salloc without a command, cmds.txt on its stdin"
run salloc -N1 <cmds.txt
wait_queue_empty
run salloc --bogus-option true
run salloc -t bogus true
run salloc -p nosuch true
