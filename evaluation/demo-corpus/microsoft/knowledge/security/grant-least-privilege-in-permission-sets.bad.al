permissionset 50121 "Fleet Trips View Bad"
{
    Assignable = true;
    Caption = 'Fleet trips - read only';
    Permissions =
        // Write rights in a set that only exists to view trips.
        tabledata "Fleet Trip Log" = RIMD,
        tabledata "Fleet Vehicle" = RIMD,
        table "Fleet Trip Log" = X,
        table "Fleet Vehicle" = X,
        page "Fleet Trip Log List" = X;
}
