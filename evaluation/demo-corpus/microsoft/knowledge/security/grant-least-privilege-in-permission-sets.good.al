permissionset 50120 "Fleet Trips View Good"
{
    Assignable = true;
    Caption = 'Fleet trips - read only';
    Permissions =
        tabledata "Fleet Trip Log" = R,
        tabledata "Fleet Vehicle" = R,
        table "Fleet Trip Log" = X,
        table "Fleet Vehicle" = X,
        page "Fleet Trip Log List" = X;
}
