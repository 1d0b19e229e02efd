import json

print(json.dumps({"sum": sum(n * n for n in range(1, 101))}))
