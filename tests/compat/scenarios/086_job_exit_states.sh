# Final states: success, exit codes, a signal, command not found, cancelled while running,
# a time limit reached is too slow here (see tests/compat/golden).
run sbatch --wrap 'exit 0'
A=$J
run sbatch --wrap 'exit 42'
B=$J
run sbatch --wrap 'kill -TERM $$'
C=$J
run sbatch --wrap 'no-such-command-xyz'
D=$J
for j in "$A" "$B" "$C" "$D"; do wait_done "$j"; done
for j in "$A" "$B" "$C" "$D"; do fields "$j" JobState Reason ExitCode DerivedExitCode; done
run sbatch -o /dev/null --wrap 'touch started; exec sleep 60'
E=$J
wait_state "$E" RUNNING
wait_file started
run scancel "$E"
wait_done "$E"
fields "$E" JobState Reason ExitCode
