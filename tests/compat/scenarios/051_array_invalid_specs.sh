# Malformed --array values: which are refused (and how), and what the accepted odd ones
# become (ArrayTaskId, throttle).
for spec in 5-1 abc 1-3:0 1-3%0 '' 1,,2 -1 1-3:-1 2% 1-3%; do
  run sbatch -p parked --array="$spec" --wrap true
  if [[ -n $J ]]; then
    fields "$J" ArrayJobId ArrayTaskId ArrayTaskThrottle
    run scancel "$J"
  fi
done
