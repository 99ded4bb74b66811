# after:J runs once J has started (not ended); after:J+1 waits a minute more (shown only).
run sbatch -o first.out --wrap 'sleep 4; echo first done'
A=$J
run sbatch -d after:"$A" -o second.out --wrap 'echo second started'
B=$J
wait_done "$B" 30
fields "$A" JobState
fields "$B" JobState Dependency
run sbatch -p parked -d after:"$A"+1 --wrap true
fields "$J" Dependency
show_outputs
wait_done "$A"
