/* columns.h - the first column of the tools' tables (configuration ids,
 * verify's cases): padded to its width, or, when longer, on a line of its
 * own with the row going on under it, so the other columns still align. */
#ifndef PCB_COLUMNS_H
#define PCB_COLUMNS_H

#include <stdio.h>
#include <string.h>

static inline void pcb_column(FILE *f, const char *text, int width)
{
    if ((int)strlen(text) > width)
        fprintf(f, "%s\n%-*s", text, width, "");
    else
        fprintf(f, "%-*s", width, text);
}

#endif
