import json

primes = [n for n in range(2, 1000) if all(n % d for d in range(2, int(n**0.5) + 1))]
print(json.dumps({"count": len(primes), "last": primes[-1]}))
