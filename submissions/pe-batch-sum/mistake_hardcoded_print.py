# expect: fails builds-the-table, adds-the-first-three-rows
print("(1, 3, 6)")
