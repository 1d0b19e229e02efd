codeunit 50155 "Item Change Log Bad"
{
    [EventSubscriber(ObjectType::Table, Database::Item, 'OnAfterModifyEvent', '', false, false)]
    local procedure LogItemChange(var Rec: Record Item; var xRec: Record Item; RunTrigger: Boolean)
    var
        ItemChangeEntry: Record "Item Change Entry";
    begin
        // Temporary Item buffers are logged as if they were real items.
        ItemChangeEntry.Init();
        ItemChangeEntry."Item No." := Rec."No.";
        ItemChangeEntry."Changed At" := CurrentDateTime();
        ItemChangeEntry.Insert(true);
    end;
}
