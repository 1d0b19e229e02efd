import json

n, steps, peak = 27, 0, 27
while n != 1:
    n = n // 2 if n % 2 == 0 else 3 * n + 1
    steps += 1
    peak = max(peak, n)
print(json.dumps({"steps": steps, "peak": peak}))
