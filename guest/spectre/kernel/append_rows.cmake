# Appends the lab kernel's table rows (ROWS) to the tree's table (TBL).
file(READ ${ROWS} rows)
file(APPEND ${TBL} "${rows}")
